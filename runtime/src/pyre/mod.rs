//! Python `regex`-module patterns: syntax, a backtracking matcher, and the translation to DFAs.
