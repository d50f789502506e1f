"""A tiny MCP server for notebook 08 (stdio): unit conversions, written with the official `mcp` SDK."""
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

server = MCPServer("units", version="1.0")

FACTORS = {("mi", "km"): 1.609344, ("km", "mi"): 1 / 1.609344, ("kg", "lb"): 2.20462262, ("lb", "kg"): 0.45359237}


@server.tool(description="Convert a value between units: mi <-> km, kg <-> lb.")
def convert(value: float, from_unit: str, to_unit: str) -> str:
    factor = FACTORS.get((from_unit.lower(), to_unit.lower()))
    if factor is None:
        raise ToolError(f"cannot convert {from_unit} to {to_unit}; known: "
                        + ", ".join(f"{a}->{b}" for a, b in FACTORS))
    return f"{value:g} {from_unit} = {value * factor:.3f} {to_unit}"


if __name__ == "__main__":
    server.run()
