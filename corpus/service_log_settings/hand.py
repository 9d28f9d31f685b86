import logging.config

logging.config.dictConfig({"version": 1, "handlers": {"audit": {"class": "logging.handlers.RotatingFileHandler", "filename": "audit.log", "maxBytes": "1MB"}}})
