//! Finding delimiters in a stream: automata tables and the streaming scanner.

pub mod delimiter;
pub mod stream;
pub mod table;
