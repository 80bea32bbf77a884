//! The template's data as [`Lit`]s: values, transforms, content parsers,
//! delimiters with their automata, fields and the template itself.

use super::regex_lit;
use super::{Lit, ToLit, Ty, u32_table};
use crate::content::ContentSpec;
use crate::scan::delimiter::{Branch, Delimiter, DelimiterSource, Matcher};
use crate::scan::table::DfaTable;
use crate::template::{Field, Template};
use crate::transform::{Node, Transform};
use crate::value::{Map, Value};

fn call(path: &'static str, arg: Lit) -> Lit {
    Lit::Call(path, vec![arg])
}

/// `map(vec![(key, value), ..])`: a dict from its entries, in order.
fn map_lit(m: &Map) -> Lit {
    let entries = m
        .iter()
        .map(|(k, v)| Lit::Tuple(vec![k.to_lit(), v.to_lit()]))
        .collect();
    call("map", Lit::Vec(entries))
}

impl ToLit for Value {
    fn to_lit(&self) -> Lit {
        match self {
            Value::Null => Lit::Item("Value::Null"),
            Value::Bool(b) => call("Value::Bool", b.to_lit()),
            Value::Int(i) => call("Value::Int", i.to_lit()),
            // Decimal digits: the only form a bignum literal can take.
            Value::BigInt(n) => call("big_int", Lit::Str(n.to_string())),
            Value::Float(f) => call("Value::Float", f.to_lit()),
            Value::Str(s) => call("Value::Str", s.to_lit()),
            Value::List(items) => call("Value::List", items.to_lit()),
            Value::Map(m) => call("Value::Map", map_lit(m)),
        }
    }
}

impl ToLit for Node {
    fn to_lit(&self) -> Lit {
        match self {
            Node::Map(entries) => call("TransformNode::Map", entries.to_lit()),
            Node::List(items) => call("TransformNode::List", items.to_lit()),
            Node::Placeholder { path, root, keys } => Lit::Struct(
                "TransformNode::Placeholder",
                vec![
                    ("path", path.to_lit()),
                    ("root", root.to_lit()),
                    ("keys", keys.to_lit()),
                ],
            ),
            Node::Literal(v) => call("TransformNode::Literal", v.to_lit()),
            Node::TooDeep => Lit::Item("TransformNode::TooDeep"),
        }
    }
}

impl ToLit for Transform {
    fn to_lit(&self) -> Lit {
        call("Transform::from_node", self.node.to_lit())
    }
}

impl ToLit for ContentSpec {
    fn to_lit(&self) -> Lit {
        // The content parser is built from its settings on first use: its
        // arguments keep the reference's lazily raised errors, and a
        // `tag_pattern` is compiled then, once per process.
        Lit::Call(
            "ContentSpec::new",
            vec![
                Lit::Str(self.name().to_owned()),
                Lit::Ref(Box::new(self.args().to_lit())),
            ],
        )
    }
}

impl ToLit for DfaTable {
    fn to_lit(&self) -> Lit {
        let bytes = |b: &[u8]| Lit::Borrowed(Box::new(Lit::Bytes(b.to_vec())));
        // Destructured so that a new field cannot be forgotten here.
        let DfaTable {
            classes,
            stride,
            trans,
            eoi,
            flags,
            start_text,
            start_after,
        } = self;
        Lit::Struct(
            "DfaTable",
            vec![
                ("classes", bytes(classes)),
                ("stride", stride.to_lit()),
                ("trans", u32_table(trans)),
                ("eoi", u32_table(eoi)),
                ("flags", bytes(flags)),
                ("start_text", start_text.to_lit()),
                ("start_after", u32_table(start_after)),
            ],
        )
    }
}

impl ToLit for Branch {
    fn to_lit(&self) -> Lit {
        Lit::Struct(
            "Branch",
            vec![
                ("table", self.table.to_lit()),
                ("guard", self.guard.to_lit()),
            ],
        )
    }
}

impl ToLit for Matcher {
    fn to_lit(&self) -> Lit {
        match self {
            // A static of its own: the automata are read in place.
            Matcher::Dfa(branches) => call(
                "Matcher::Dfa",
                Lit::static_slice(
                    Ty::Item("Branch"),
                    branches.iter().map(ToLit::to_lit).collect(),
                ),
            ),
            Matcher::Backtrack => Lit::Item("Matcher::Backtrack"),
        }
    }
}

impl ToLit for DelimiterSource {
    fn to_lit(&self) -> Lit {
        match self {
            DelimiterSource::Literals(l) => call("DelimiterSource::Literals", l.to_lit()),
            DelimiterSource::Pattern(p) => call("DelimiterSource::Pattern", p.to_lit()),
        }
    }
}

impl ToLit for Delimiter {
    fn to_lit(&self) -> Lit {
        // Destructured so that a new field cannot be forgotten here.
        let Delimiter {
            source,
            regex,
            matcher,
            needs_regex_at_commit,
            ref_can_grow,
            first_bytes,
            may_match_empty,
            needs_history,
        } = self;
        // A byte set as the list of its members.
        let members = (0..=255u8)
            .filter(|&b| first_bytes[b as usize])
            .map(|b| b.to_lit())
            .collect();
        Lit::Struct(
            "Delimiter",
            vec![
                ("source", source.to_lit()),
                ("regex", regex_lit(regex)),
                ("matcher", matcher.to_lit()),
                ("needs_regex_at_commit", needs_regex_at_commit.to_lit()),
                ("ref_can_grow", ref_can_grow.to_lit()),
                (
                    "first_bytes",
                    call("byte_set", Lit::Ref(Box::new(Lit::Array(members)))),
                ),
                ("may_match_empty", may_match_empty.to_lit()),
                ("needs_history", needs_history.to_lit()),
            ],
        )
    }
}

impl ToLit for Field {
    fn to_lit(&self) -> Lit {
        // Destructured so that a new field cannot be forgotten here.
        let Field {
            name,
            open,
            close,
            content,
            dirty,
            repeats,
            join,
            optional,
            transform,
            transform_each,
            name_rank: _,
        } = self;
        Lit::Struct(
            "Field",
            vec![
                ("name", name.to_lit()),
                ("open", open.to_lit()),
                ("close", close.to_lit()),
                ("content", content.to_lit()),
                ("dirty", dirty.to_lit()),
                ("repeats", repeats.to_lit()),
                ("join", join.to_lit()),
                ("optional", optional.to_lit()),
                ("transform", transform.to_lit()),
                ("transform_each", transform_each.to_lit()),
                // Recomputed by `Template::assemble`.
                ("name_rank", 0u16.to_lit()),
            ],
        )
    }
}

impl ToLit for Template {
    /// `Template::assemble(..)` over the template's parts: automata as
    /// static data, the rest built by constructor code.
    fn to_lit(&self) -> Lit {
        Lit::Call(
            "Template::assemble",
            vec![
                map_lit(&self.defaults),
                self.fields.to_lit(),
                self.start_anchor.to_lit(),
                self.delimiters.to_lit(),
                call("Trackers::from_tables", self.trackers.tables.to_lit()),
            ],
        )
    }
}
