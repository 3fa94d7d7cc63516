"""The network guard behind the promise that images never leave the device."""
