"""The Features page (sparse dictionaries, crosscoders): state, compute, blocks, page."""
