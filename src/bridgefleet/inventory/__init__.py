"""Bridge inventories in: NBI files and mapped CSV tables read into an :class:`~bridgefleet.inventory.model.Inventory`,
and the fleet a configuration names (:func:`bridgefleet.inventory.fleet.resolve_fleet`)."""
