import xml.parsers.expat

xml.parsers.expat.ParserCreate().Parse("<a>&</a>", True)
