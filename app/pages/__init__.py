"""One module per page: its route, its state and the components used only there."""
