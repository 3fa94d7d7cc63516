"""What the app keeps on the device: where (platform folders), and how it is read and written safely."""
