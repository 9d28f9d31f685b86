getattr(object(), None)
