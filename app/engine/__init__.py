"""The MNN adapter: model folders, the token loop, timings, and fd-1 hygiene."""
