//! Content parsers: `text`, `int`, `float`, `bool`, `json`, `xml-inline`, `kv-lines`.
