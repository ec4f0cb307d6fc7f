"""General networks (issue 18): named layers, dense / diagonal / identity connections with
kernel taps; counting (m, H, |B| = m - H) and exact certification (docs/general-networks.md)."""
