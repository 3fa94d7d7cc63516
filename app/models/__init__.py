"""Model manifests, storage locations, verification, and finding a model by id or folder."""
