/**
 * Connecting to a running TCP server (`infill run`, `infill lsp --tcp PORT`) instead of starting
 * one: the `HOST:PORT` of `infill.serverAddress`, the token file that the server wrote at launch
 * (`infill.tokenFile`, or the server's default path for that port), and the socket. The server
 * closes a connection whose `initialize` does not carry that token in `initializationOptions`.
 * Nothing here touches VS Code, so the rules are tested with real files and sockets.
 */
import * as fs from "fs";
import * as net from "net";
import * as path from "path";
import type { StreamInfo } from "vscode-languageclient/node";
import type { TokenOption } from "./protocol";

export interface Address {
  host: string;
  port: number;
}

/** Raised for an `infill.serverAddress` that is not `HOST:PORT`. */
export class BadAddress extends Error {}

/** Raised when the token cannot be read; its message says how to get one. */
export class TokenUnavailable extends Error {}

/** Raised when nothing answers at the address; its message says what to start. */
export class ServerUnreachable extends Error {}

/** The part of the environment that places the server's default token file. */
export interface TokenEnv {
  XDG_RUNTIME_DIR?: string;
  XDG_STATE_HOME?: string;
}

const TOKEN = /^[0-9a-f]{64}$/i;

/** `HOST:PORT` (an IPv6 host in brackets, `[::1]:2087`) as an address. */
export function parseAddress(text: string): Address {
  const match = /^(?:\[([^\]]+)\]|([^:\s]+)):(\d{1,5})$/.exec(text.trim());
  const port = match ? Number(match[3]) : 0;
  if (!match || port < 1 || port > 65535) {
    throw new BadAddress(`"infill.serverAddress" is ${JSON.stringify(text)}: give it as HOST:PORT, `
                         + "e.g. 127.0.0.1:2087, or leave it empty to let the extension start the server");
  }
  return { host: match[1] ?? match[2], port };
}

/** Where the server writes its token for `port` unless told otherwise (`--token-file`). */
export function tokenPath(port: number, env: TokenEnv, home: string): string {
  const file = `lsp-${port}.token`;
  if (env.XDG_RUNTIME_DIR) {
    return path.join(env.XDG_RUNTIME_DIR, "infill", file);
  }
  return path.join(env.XDG_STATE_HOME || path.join(home, ".local", "state"), "infill", file);
}

/** The token file to read: the `infill.tokenFile` setting (with `~` expanded), else the default. */
export function tokenFileFor(setting: string, port: number, env: TokenEnv, home: string): string {
  if (!setting) {
    return tokenPath(port, env, home);
  }
  return setting === "~" || setting.startsWith("~/") ? path.join(home, setting.slice(1)) : setting;
}

/** The token in `file`: 64 hex digits, then a newline. */
export function readToken(file: string, read: (file: string) => string = (name) => fs.readFileSync(name, "utf8"))
  : string {
  const advice = "start the server with `infill run` or `infill lsp --tcp PORT` (it prints where it writes "
                 + "its token), or set \"infill.tokenFile\" to that path";
  let text: string;
  try {
    text = read(file);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new TokenUnavailable(`cannot read the server's token from ${file} (${reason}): ${advice}`);
  }
  const token = text.trim();
  if (!TOKEN.test(token)) {
    throw new TokenUnavailable(`${file} does not hold a server token (64 hex digits): ${advice}`);
  }
  return token;
}

/** A socket connected to `address`; rejects with a `ServerUnreachable` when nothing answers. */
export function connect(address: Address): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(address.port, address.host);
    socket.once("connect", () => {
      socket.removeAllListeners("error");
      resolve(socket);
    });
    socket.once("error", (error) => {
      socket.destroy();
      reject(new ServerUnreachable(
        `cannot connect to the infill server at ${address.host}:${address.port} (${error.message}): start it `
        + "with `infill run` or `infill lsp --tcp PORT`, or clear \"infill.serverAddress\" to let the "
        + "extension start its own"));
    });
  });
}

/**
 * The language client's server, for a TCP address: each (re)connection reads the token afresh (a
 * restarted server has a new one) and keeps it for that connection's `initialize`.
 */
export class TcpServer {
  token: string | undefined;

  constructor(readonly address: Address, readonly tokenFile: string,
              private readonly read: (file: string) => string = readToken,
              private readonly open: (address: Address) => Promise<net.Socket> = connect) {}

  /** The `ServerOptions` function of `vscode-languageclient`. */
  readonly start = async (): Promise<StreamInfo> => {
    this.token = this.read(this.tokenFile);
    const socket = await this.open(this.address);
    return { reader: socket, writer: socket };
  };

  /**
   * `error` from starting the client, saying what to check when the server ended a connection
   * made with a token (a wrong one, or another editor already connected).
   */
  explain(error: unknown): unknown {
    if (error instanceof TokenUnavailable || error instanceof ServerUnreachable || this.token === undefined) {
      return error;
    }
    const reason = error instanceof Error ? error.message : String(error);
    return new Error(`the server at ${this.address.host}:${this.address.port} ended the connection (${reason}): `
                     + "it serves one editor at a time, the one with its launch's token; is "
                     + `${this.tokenFile} the token file it printed, and no other editor connected?`);
  }

  /** `settings` with the token of the current connection as the top-level `token` key. */
  initializationOptions<T extends object>(settings: T): T | (T & TokenOption) {
    return this.token === undefined ? settings : { ...settings, token: this.token };
  }
}
