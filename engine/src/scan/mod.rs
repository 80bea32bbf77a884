//! Finding delimiters in a stream: automata tables and the streaming scanner.

pub mod captures;
pub mod delimiter;
pub(crate) mod guards;
pub mod stream;
pub mod table;
