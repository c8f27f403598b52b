import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as net from "node:net";
import * as os from "node:os";
import * as path from "node:path";
import { after, test } from "node:test";
import {
  BadAddress, connect, parseAddress, readToken, ServerUnreachable, TcpServer, tokenFileFor, TokenUnavailable,
  tokenPath,
} from "../src/tcp";

const TOKEN = "0123456789abcdef".repeat(4);

const folders: string[] = [];

function temporaryFolder(): string {
  folders.push(fs.mkdtempSync(path.join(os.tmpdir(), "infill-tcp-test-")));
  return folders[folders.length - 1];
}

after(() => folders.forEach((folder) => fs.rmSync(folder, { recursive: true, force: true })));

/** A loopback server that records what its one client sends; `port` once listening. */
async function listen(onConnection: (socket: net.Socket) => void): Promise<{ server: net.Server; port: number }> {
  const server = net.createServer(onConnection);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { server, port: (server.address() as net.AddressInfo).port };
}

test("an address is HOST:PORT, an IPv6 host in brackets", () => {
  assert.deepEqual(parseAddress("127.0.0.1:2087"), { host: "127.0.0.1", port: 2087 });
  assert.deepEqual(parseAddress(" localhost:1 "), { host: "localhost", port: 1 });
  assert.deepEqual(parseAddress("[::1]:65535"), { host: "::1", port: 65535 });
});

test("a bad address names the setting and the form it takes", () => {
  for (const text of ["127.0.0.1", ":2087", "host:0", "host:65536", "host:http", "tcp://host:2087", "a b:1"]) {
    assert.throws(() => parseAddress(text),
                  (error: Error) => error instanceof BadAddress && error.message.includes("infill.serverAddress")
                                    && error.message.includes("HOST:PORT"), text);
  }
});

test("the default token file: the runtime folder, else the state folder, else ~/.local/state", () => {
  assert.equal(tokenPath(2087, { XDG_RUNTIME_DIR: "/run/user/1000", XDG_STATE_HOME: "/s" }, "/home/u"),
               "/run/user/1000/infill/lsp-2087.token");
  assert.equal(tokenPath(9000, { XDG_STATE_HOME: "/home/u/state" }, "/home/u"), "/home/u/state/infill/lsp-9000.token");
  assert.equal(tokenPath(2087, {}, "/home/u"), "/home/u/.local/state/infill/lsp-2087.token");
  assert.equal(tokenPath(2087, { XDG_RUNTIME_DIR: "", XDG_STATE_HOME: "" }, "/home/u"),
               "/home/u/.local/state/infill/lsp-2087.token");
});

test("the tokenFile setting wins over the default, with ~ expanded", () => {
  const env = { XDG_RUNTIME_DIR: "/run/user/1000" };
  assert.equal(tokenFileFor("~/tokens/lsp.token", 2087, env, "/home/u"), "/home/u/tokens/lsp.token");
  assert.equal(tokenFileFor("/srv/t", 2087, env, "/home/u"), "/srv/t");
  assert.equal(tokenFileFor("", 2087, env, "/home/u"), "/run/user/1000/infill/lsp-2087.token");
});

test("the token is read from its file, without the newline", () => {
  const file = path.join(temporaryFolder(), "lsp-2087.token");
  fs.writeFileSync(file, `${TOKEN}\n`, { mode: 0o600 });
  assert.equal(readToken(file), TOKEN);
});

test("a missing token file says how to start the server or where to point the setting", () => {
  const file = path.join(temporaryFolder(), "absent.token");
  assert.throws(() => readToken(file), (error: Error) => error instanceof TokenUnavailable
    && error.message.includes(file) && error.message.includes("infill lsp --tcp")
    && error.message.includes("infill run") && error.message.includes("infill.tokenFile"));
});

test("a file that holds no token is refused", () => {
  for (const text of ["", "not a token\n", `${TOKEN.slice(1)}\n`, `${TOKEN}0\n`, `${TOKEN.slice(2)}zz\n`]) {
    assert.throws(() => readToken("/t", () => text),
                  (error: Error) => error instanceof TokenUnavailable && error.message.includes("/t"), text);
  }
});

test("connect: a socket to a listening server carries bytes both ways", async () => {
  const { server, port } = await listen((socket) => socket.pipe(socket));
  try {
    const socket = await connect({ host: "127.0.0.1", port });
    const echoed = new Promise<string>((resolve) => socket.once("data", (data) => resolve(data.toString())));
    socket.write("Content-Length: 2\r\n\r\n{}");
    assert.equal(await echoed, "Content-Length: 2\r\n\r\n{}");
    socket.destroy();
  } finally {
    server.close();
  }
});

test("connect: nothing listening is an error that names the address and what to start", async () => {
  const { server, port } = await listen(() => undefined);
  await new Promise((resolve) => server.close(resolve));
  await assert.rejects(connect({ host: "127.0.0.1", port }), (error: Error) => error instanceof ServerUnreachable
    && error.message.includes(`127.0.0.1:${port}`) && error.message.includes("infill lsp --tcp")
    && error.message.includes("infill.serverAddress"));
});

test("each connection reads the token afresh and puts it at the top of initializationOptions", async () => {
  const folder = temporaryFolder();
  const file = path.join(folder, "lsp.token");
  const { server, port } = await listen((socket) => socket.resume());
  try {
    const tcp = new TcpServer({ host: "127.0.0.1", port }, file);
    assert.deepEqual(tcp.initializationOptions({ maxTokens: 8 }), { maxTokens: 8 });
    fs.writeFileSync(file, `${TOKEN}\n`);
    const first = await tcp.start();
    assert.deepEqual(tcp.initializationOptions({ maxTokens: 8 }), { maxTokens: 8, token: TOKEN });
    const second = "f".repeat(64);
    fs.writeFileSync(file, `${second}\n`);  // the server was restarted: a new token
    const again = await tcp.start();
    assert.deepEqual(tcp.initializationOptions({}), { token: second });
    for (const stream of [first, again]) {
      assert.equal(stream.reader, stream.writer);
      (stream.reader as net.Socket).destroy();
    }
  } finally {
    server.close();
  }
});

test("no token, no connection", async () => {
  let opened = 0;
  const tcp = new TcpServer({ host: "127.0.0.1", port: 2087 }, path.join(temporaryFolder(), "absent.token"),
                            readToken, async () => { opened += 1; return new net.Socket(); });
  await assert.rejects(tcp.start(), TokenUnavailable);
  assert.equal(opened, 0);
  assert.deepEqual(tcp.initializationOptions({}), {});
});

test("a connection the server ended is explained; the errors that say what to do already are kept", async () => {
  const tcp = new TcpServer({ host: "127.0.0.1", port: 2087 }, "/run/u/infill/lsp-2087.token",
                            () => TOKEN, async () => new net.Socket());
  const early = new Error("no token read yet");
  assert.equal(tcp.explain(early), early);
  await tcp.start();
  const ended = tcp.explain(new Error("Pending response rejected since connection got disposed")) as Error;
  assert.match(ended.message, /127\.0\.0\.1:2087 ended the connection \(Pending response rejected/);
  assert.ok(ended.message.includes("/run/u/infill/lsp-2087.token") && ended.message.includes("one editor at a time"));
  for (const own of [new TokenUnavailable("t"), new ServerUnreachable("u")]) {
    assert.equal(tcp.explain(own), own);
  }
});
