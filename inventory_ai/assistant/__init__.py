"""The tool-calling core: tools, their registry, the loop, and the model providers."""
