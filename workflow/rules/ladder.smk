# The ladder family: from the plain average to the full block (TABLES.md: average_ladder, ...).

AVERAGE_LADDER = {
    "no_context": "ladder/no_context",
    "average": "ladder/average",
    "positions": "ladder/average_positions",
    "residual": "ladder/average_residual",
}

add_table("average_ladder", runs=AVERAGE_LADDER)
