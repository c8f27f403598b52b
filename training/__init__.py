"""Training data that follows the product's own rules: the layer above the front ends' rules
(`completion`), the worker's reading of a request (`engine`) and the model's canvas (`infill`).
Nothing imports it but its command line and tests."""
