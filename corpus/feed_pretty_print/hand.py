import xml.dom.minidom

xml.dom.minidom.parseString("<a>&</a>")
