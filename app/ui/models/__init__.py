"""The Models screen: the catalog, downloads, imports and removal."""
