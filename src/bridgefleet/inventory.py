"""Public home of the inventory readers (implemented in :mod:`bridgefleet.fleet.inventory`)."""

from bridgefleet.fleet.inventory import (
    Inventory,
    InventoryError,
    load_inventory,
    read_csv_inventory,
    read_nbi,
    summarize,
)

__all__ = ["Inventory", "InventoryError", "load_inventory", "read_csv_inventory", "read_nbi", "summarize"]
