//! Finding delimiters in a stream: automata tables and the streaming scanner.

pub mod table;
