//! Tool calls (and any other repeated region with a transform, or list of
//! them with `transform_each`) built straight into the template's generated
//! structs.
//!
//! The engine closes a region by parsing its text, applying the field's
//! transform to build a dict (`{"type": "function", "function": {...}}`),
//! and appending it to the message's list; a compiled parser's typed
//! message then took those dicts apart again into its structs. For a field
//! whose transform is a dict of literals, captures, `{content}` and key
//! paths into it (`{content.name}`), the generated `Regions` (the engine's
//! `TypedRegions`) builds the struct from the parsed content and the
//! captures directly: no dict, no key strings, no second pass. With
//! `transform_each` it builds one struct per element of the parsed list,
//! from the element's entries (or the captures). The dict is made from the
//! struct only if a region event's value is read.
//!
//! The builder gives exactly the transform's value or declines: it hands
//! the parsed value back (and the engine's transform runs, with its errors)
//! when a placeholder's group is missing from the region's captures, a key
//! path or an element's entry is missing, or the content is not of the
//! type the struct holds.

use crate::types::{Model, Presence, Ty};
use proc_macro2::{Ident, Literal, TokenStream};
use quote::{format_ident, quote};
use retort::Template;
use retort::Value;
use retort::template::Field;
use retort::transform::Node;

/// One field whose values the generated code builds.
struct TypedField {
    /// The field's index.
    index: usize,
    /// The `Regions` member holding its values.
    member: Ident,
    /// The item type (a generated struct).
    item: TokenStream,
    /// The builder's body: `parsed: Value` and `captures` to `Result<item,
    /// Value>` (`Result<Vec<item>, Value>` with `each`).
    build: TokenStream,
    /// `transform_each` (on a field that does not repeat): a region's value
    /// is the list of its items, and it replaces the field's value.
    each: bool,
    /// For a plain JSON region read by entries: the entries' keys, and the
    /// body building an item from them (`found`, one per key) and
    /// `captures`, to `Option<item>`.
    json: Option<(Vec<String>, TokenStream)>,
}

/// The code that builds one transform.
struct Builder<'a> {
    model: &'a Model,
    kr: &'a TokenStream,
    /// The named groups of the field's delimiters.
    groups: Vec<String>,
    /// Checks that run before anything is built (so that declining hands
    /// the parsed value back untouched).
    checks: Vec<TokenStream>,
    /// Groups already looked up, with their locals (each the index of
    /// the group's entry in `captures`).
    locals: Vec<(String, Ident)>,
    /// How many placeholders of each group are still to be built: the
    /// last one moves the group's text out of `captures` (the region's
    /// groups are not read again once its value is built), the others copy
    /// it.
    uses: Vec<(String, usize)>,
    /// Reading a plain JSON region's object entries from its text
    /// (`TypedRegions::close_json`): `{content.key}` is the entry `found[i]`
    /// of these keys, and a missing one declines with `None`. `None`: the
    /// builder reads the parsed content.
    json: Option<Vec<String>>,
    /// Whether `{content}` was used (it is moved, so once at most).
    content_used: bool,
    /// The key paths into `{content}` used (`{content.name}`: `["name"]`),
    /// each moved out of it: no path may be another's prefix, nor meet
    /// `{content}` itself.
    paths: Vec<Vec<String>>,
    /// `transform_each`: placeholders name an entry of the list element
    /// (`item`, a `Map`), or else a named group (`{**captures, **item}`).
    item: bool,
    /// `transform_each`: the entries used, each moved out of the element,
    /// so once at most.
    roots: Vec<String>,
}

impl Builder<'_> {
    /// The expression building `node` as a value of type `ty`, if the
    /// generated code can build it exactly as the transform does.
    fn expr(&mut self, node: &Node, ty: &Ty) -> Option<TokenStream> {
        let kr = self.kr;
        match (node, ty) {
            // `transform_each`: `{name}` is the element's entry, moved out
            // of it, or the group's text when the element has no such
            // entry (the types make it `Any`: an entry can hold anything).
            // The test that one of them is there runs on every element
            // before anything is moved.
            (Node::Placeholder { root, keys, .. }, Ty::Any) if self.item => {
                if !keys.is_empty() || self.roots.contains(root) {
                    return None;
                }
                self.roots.push(root.clone());
                // A name no group has is the element's entry or missing.
                let groups = match self.groups.iter().any(|g| g == root) {
                    true => quote!(captures),
                    false => quote!(&[]),
                };
                self.checks.push(quote! {
                    if !#kr::has_entry(item, #groups, #root) {
                        return false;
                    }
                });
                Some(quote!(#kr::take_entry(&mut item, #groups, #root)))
            }
            (Node::Placeholder { .. }, _) if self.item => None,
            (Node::Map(entries), Ty::Struct(s)) => {
                let def = &self.model.structs[*s];
                if def.members.len() != entries.len() {
                    return None;
                }
                let name = format_ident!("{}", def.name);
                let mut inits = Vec::with_capacity(entries.len());
                for ((key, child), member) in entries.iter().zip(&def.members) {
                    if *key != member.key || member.presence != Presence::Always {
                        return None;
                    }
                    let ident = format_ident!("{}", member.ident);
                    let e = self.expr(child, &member.ty)?;
                    inits.push(quote!(#ident: #e));
                }
                Some(quote!(#name { #(#inits,)* }))
            }
            (Node::Literal(Value::Str(s)), Ty::Str) => {
                Some(quote!(::std::string::String::from(#s)))
            }
            (Node::Literal(Value::Bool(b)), Ty::Bool) => Some(quote!(#b)),
            (Node::Literal(Value::Int(i)), Ty::Int) => {
                let lit = Literal::i64_suffixed(*i);
                Some(quote!(#kr::Int::I64(#lit)))
            }
            // `{content}`: the scope's `content` comes before any group of
            // that name, and a placeholder used once moves it.
            (Node::Placeholder { root, keys, .. }, _) if keys.is_empty() && root == "content" => {
                if self.content_used || !self.paths.is_empty() || self.json.is_some() {
                    return None;
                }
                self.content_used = true;
                match ty {
                    Ty::Any => Some(quote!(parsed)),
                    Ty::Map => {
                        self.checks.push(quote! {
                            let parsed = match parsed {
                                #kr::Value::Map(map) => map,
                                other => return ::core::result::Result::Err(other),
                            };
                        });
                        Some(quote!(parsed))
                    }
                    _ => None,
                }
            }
            // `{content.a.b}` (Llama 3.1's `{content.name}`): the reference
            // copies the entry out of the content, which is dropped after;
            // the builder moves it, once the test that every path is there
            // has passed (a missing step or a content that is not a dict:
            // the engine's transform raises the reference's error).
            (Node::Placeholder { root, keys, .. }, Ty::Any)
                if !keys.is_empty() && root == "content" =>
            {
                let overlaps = |p: &Vec<String>| p.starts_with(keys) || keys.starts_with(p);
                if self.content_used || self.paths.iter().any(overlaps) {
                    return None;
                }
                self.paths.push(keys.clone());
                if let Some(json) = &mut self.json {
                    // One entry of the object, parsed alone.
                    let [key] = keys.as_slice() else {
                        return None;
                    };
                    let i = json.len();
                    json.push(key.clone());
                    self.checks.push(quote! {
                        if found[#i].is_none() {
                            return ::core::option::Option::None;
                        }
                    });
                    return Some(quote! {
                        match found[#i].take() {
                            ::core::option::Option::Some(v) => v,
                            ::core::option::Option::None => #kr::Value::Null,
                        }
                    });
                }
                let (test, take) = (keys.iter(), keys.iter());
                self.checks.push(quote! {
                    if #kr::value_at(&parsed, &[#(#test),*]).is_none() {
                        return ::core::result::Result::Err(parsed);
                    }
                });
                Some(quote!(#kr::take_at(&mut parsed, &[#(#take),*])))
            }
            // A named group: its text (the last group of that name), moved
            // out of the captures by its last placeholder.
            (Node::Placeholder { root, keys, .. }, Ty::Str | Ty::Any)
                if keys.is_empty() && self.groups.iter().any(|g| g == root) =>
            {
                let local = self.group(root);
                let left = self.uses.iter_mut().find(|(g, _)| g == root)?;
                left.1 = left.1.checked_sub(1)?;
                let text = match left.1 {
                    0 => quote!(::core::mem::take(&mut captures[#local].1)),
                    _ => quote!(captures[#local].1.clone()),
                };
                Some(match ty {
                    Ty::Str => text,
                    _ => quote!(#kr::Value::Str(#text)),
                })
            }
            _ => None,
        }
    }

    /// The local holding group `root`'s text, looked up once; a region
    /// without it declines.
    fn group(&mut self, root: &str) -> Ident {
        if let Some((_, local)) = self.locals.iter().find(|(g, _)| g == root) {
            return local.clone();
        }
        let local = format_ident!("group_{}", self.locals.len());
        let decline = match self.json {
            Some(_) => quote!(::core::option::Option::None),
            None => quote!(::core::result::Result::Err(parsed)),
        };
        self.checks.push(quote! {
            let ::core::option::Option::Some(#local) = captures
                .iter()
                .rposition(|(name, _)| name == #root)
            else {
                return #decline;
            };
        });
        self.locals.push((root.to_owned(), local.clone()));
        local
    }
}

/// The field's values as the generated code builds them, if it can: a
/// field without `join` or a default whose transform is a dict the types
/// made a struct of, either applied per region of a field that `repeats`
/// (of literals, groups, `{content}` or key paths into it), or per list
/// element (`transform_each`) of a field that does not (of literals and
/// entries of the element or groups, each used once).
fn typed_field(
    t: &Template,
    model: &Model,
    index: usize,
    f: &Field,
    kr: &TokenStream,
) -> Result<TypedField, &'static str> {
    let Some(transform) = f.transform.as_ref() else {
        return Err("no transform");
    };
    let each = f.transform_each;
    if each && f.repeats {
        return Err("`transform_each` on a field that `repeats`");
    }
    if !each && !f.repeats {
        return Err("not `repeats`");
    }
    if f.join.is_some() {
        return Err("`join`");
    }
    if t.defaults().contains_key(&f.name) {
        return Err("a default");
    }
    let not_struct = "its value is not a dict of fixed keys";
    let member = model
        .message
        .iter()
        .find(|m| m.key == f.name)
        .ok_or(not_struct)?;
    let Ty::List(item) = &member.ty else {
        return Err(not_struct);
    };
    let Ty::Struct(s) = **item else {
        return Err(not_struct);
    };
    let mut groups = Vec::new();
    for d in [f.open, f.close].into_iter().flatten() {
        for (name, _) in t.delimiter(d as usize).regex.group_names() {
            groups.push(name.clone());
        }
    }
    let builder = |json: bool| {
        let mut b = Builder {
            model,
            kr,
            groups: groups.clone(),
            checks: Vec::new(),
            locals: Vec::new(),
            json: json.then(Vec::new),
            content_used: false,
            paths: Vec::new(),
            item: each,
            roots: Vec::new(),
            uses: Vec::new(),
        };
        // (A group's placeholders in a `transform_each` element are the
        // element's entries or else copies: elements share the groups.)
        if !each {
            for g in &groups {
                if !b.uses.iter().any(|(u, _)| u == g) {
                    b.uses.push((g.clone(), group_uses(transform.node(), g)));
                }
            }
        }
        b
    };
    let mut b = builder(false);
    let value = b.expr(transform.node(), item).ok_or(
        "a placeholder of no group, with keys into a group or an element, `{content}` met twice (whole, or one key path within another), an element's entry used twice, or a literal other than a string, bool or int",
    )?;
    let checks = &b.checks;
    let name = format_ident!("{}", model.structs[s].name);
    if each {
        // Every element is tested before any is taken apart, so that a
        // region the transform must build is handed back as it came.
        let build = quote! {
            let captures: &[(::std::string::String, ::std::string::String)] = captures;
            let _ = captures;
            let fits = |item: &#kr::Value| -> bool {
                let #kr::Value::Map(item) = item else {
                    return false;
                };
                #(#checks)*
                let _ = item;
                true
            };
            match parsed {
                #kr::Value::List(items) if items.iter().all(fits) => ::core::result::Result::Ok(
                    items
                        .into_iter()
                        .filter_map(|item| match item {
                            #kr::Value::Map(map) => ::core::option::Option::Some(map),
                            _ => ::core::option::Option::None,
                        })
                        .map(|mut item| {
                            let _ = &mut item;
                            #value
                        })
                        .collect(),
                ),
                other => ::core::result::Result::Err(other),
            }
        };
        return Ok(TypedField {
            index,
            member: format_ident!("field_{}", index),
            item: quote!(#name),
            build,
            each,
            json: None,
        });
    }
    // Without `{content}` the transform drops the parsed value; key paths
    // move their entries out of it.
    let drop_content = match (b.content_used, b.paths.is_empty()) {
        (false, true) => Some(quote!(let _ = parsed;)),
        (false, false) => Some(quote!(let mut parsed = parsed;)),
        (true, _) => None,
    };
    let build = quote! {
        #(#checks)*
        #drop_content
        ::core::result::Result::Ok(#value)
    };
    // A plain JSON region whose transform reads no more of its content
    // than entries of the object (`{content.name}`, or nothing) is built
    // from its text: the entries are parsed alone, the object is not.
    let mut j = builder(true);
    let json = match (f.content.plain_json(), j.expr(transform.node(), item)) {
        (true, Some(value)) => {
            let keys = j.json.take().unwrap_or_default();
            let checks = &j.checks;
            Some((
                keys,
                quote! {
                    #(#checks)*
                    ::core::option::Option::Some(#value)
                },
            ))
        }
        _ => None,
    };
    Ok(TypedField {
        index,
        member: format_ident!("field_{}", index),
        item: quote!(#name),
        build,
        each,
        json,
    })
}

/// How many placeholders of `node` are group `g`'s text (`{g}`, no keys).
fn group_uses(node: &Node, g: &str) -> usize {
    match node {
        Node::Map(entries) => entries.iter().map(|(_, n)| group_uses(n, g)).sum(),
        Node::List(items) => items.iter().map(|n| group_uses(n, g)).sum(),
        Node::Placeholder { root, keys, .. } => usize::from(keys.is_empty() && root == g),
        Node::Literal(_) | Node::TooDeep => 0,
    }
}

/// How the generated code builds a field's values (see [`plan`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Built {
    /// The generated struct each value is.
    pub item: String,
    /// For a plain JSON region whose transform reads only entries of the
    /// object: those entries' keys, read from the region's text without
    /// building the object (`TypedRegions::close_json`).
    pub entries: Option<Vec<String>>,
}

/// For each field with a transform, in template order: how the generated
/// code builds its values, or why the engine's transform builds them (what
/// `retort check --verbose` reports).
pub fn plan(t: &Template) -> Vec<(usize, Result<Built, &'static str>)> {
    let model = crate::types::derive(t);
    let kr = quote!(__rt);
    t.fields()
        .iter()
        .enumerate()
        .filter(|(_, f)| f.transform.is_some())
        .map(|(i, f)| {
            let built = typed_field(t, &model, i, f, &kr).map(|tf| Built {
                item: tf.item.to_string(),
                entries: tf.json.map(|(keys, _)| keys),
            });
            (i, built)
        })
        .collect()
}

/// The module's `Regions` type (the machine's `TypedRegions`), and for
/// each member of the message that it holds, the member's key and the
/// `Regions` member: `Message::from_fields` reads those from it.
pub fn generate(
    t: &Template,
    model: &Model,
    kr: &TokenStream,
) -> (TokenStream, Vec<(String, Ident)>) {
    let fields: Vec<TypedField> = t
        .fields()
        .iter()
        .enumerate()
        .filter_map(|(i, f)| typed_field(t, model, i, f, kr).ok())
        .collect();
    let members: Vec<&Ident> = fields.iter().map(|f| &f.member).collect();
    let items: Vec<&TokenStream> = fields.iter().map(|f| &f.item).collect();
    let indices: Vec<usize> = fields.iter().map(|f| f.index).collect();
    let builders: Vec<Ident> = fields
        .iter()
        .map(|f| format_ident!("build_{}", f.index))
        .collect();
    let bodies: Vec<&TokenStream> = fields.iter().map(|f| &f.build).collect();
    // Fields built from a plain JSON region's entries.
    let by_entries: Vec<&TypedField> = fields.iter().filter(|f| f.json.is_some()).collect();
    let json_indices: Vec<usize> = by_entries.iter().map(|f| f.index).collect();
    let json_members: Vec<&Ident> = by_entries.iter().map(|f| &f.member).collect();
    let json_items: Vec<&TokenStream> = by_entries.iter().map(|f| &f.item).collect();
    let json_builders: Vec<Ident> = by_entries
        .iter()
        .map(|f| format_ident!("build_{}_from_entries", f.index))
        .collect();
    let json_keys: Vec<&Vec<String>> = by_entries
        .iter()
        .filter_map(|f| f.json.as_ref().map(|(k, _)| k))
        .collect();
    let json_counts: Vec<usize> = json_keys.iter().map(|k| k.len()).collect();
    let json_bodies: Vec<&TokenStream> = by_entries
        .iter()
        .filter_map(|f| f.json.as_ref().map(|(_, b)| b))
        .collect();
    // What a builder returns: a region's item, or (`transform_each`) its
    // list of them.
    let built: Vec<TokenStream> = fields
        .iter()
        .map(|f| {
            let item = &f.item;
            match f.each {
                true => quote!(::std::vec::Vec<#item>),
                false => quote!(#item),
            }
        })
        .collect();
    // A region event's value: the item, or the whole list (`value` ignores
    // `j` for these fields, whose list is one region's).
    let values: Vec<TokenStream> = fields
        .iter()
        .map(|f| {
            let member = &f.member;
            match f.each {
                true => quote!(#kr::Value::List(self.#member.iter().map(#kr::Typed::to_value).collect())),
                false => quote!(self.#member.get(j).map_or(#kr::Value::Null, #kr::Typed::to_value)),
            }
        })
        .collect();
    // Closing a region: its item joins the list, or its list replaces the
    // field's.
    let closes: Vec<TokenStream> = fields
        .iter()
        .map(|f| {
            let (member, builder) = (&f.member, format_ident!("build_{}", f.index));
            match f.each {
                true => quote! {
                    self.#member = #builder(parsed, captures)?;
                    ::core::result::Result::Ok(0)
                },
                false => quote! {
                    let value = #builder(parsed, captures)?;
                    self.#member.push(value);
                    ::core::result::Result::Ok(self.#member.len() - 1)
                },
            }
        })
        .collect();
    let docs: Vec<String> = fields
        .iter()
        .map(|f| match f.each {
            true => format!(
                " The value of `{}`: the last region's list, each element built from the element's entries and the region's named groups as its transform builds them.",
                t.fields()[f.index].name
            ),
            false => format!(
                " The values of `{}`, built from each region's parsed content and named groups as its transform builds them.",
                t.fields()[f.index].name
            ),
        })
        .collect();
    let read: Vec<(String, Ident)> = fields
        .iter()
        .map(|f| (t.fields()[f.index].name.clone(), f.member.clone()))
        .collect();
    let code = quote! {
        /// The values of regions this template builds in its own types
        /// (tool calls straight into their structs, without the
        /// transform's dict), as the parser keeps them until `finalize`.
        #[derive(Clone, Debug, Default)]
        pub struct Regions {
            #(#[doc = #docs] #members: ::std::vec::Vec<#items>,)*
        }

        #(
            #[inline]
            fn #builders(
                parsed: #kr::Value,
                captures: &mut [(::std::string::String, ::std::string::String)],
            ) -> ::core::result::Result<#built, #kr::Value> {
                let _ = captures;
                #bodies
            }
        )*

        #(
            #[inline]
            fn #json_builders(
                found: &mut [::core::option::Option<#kr::Value>; #json_counts],
                captures: &mut [(::std::string::String, ::std::string::String)],
            ) -> ::core::option::Option<#json_items> {
                let _ = (&found, &captures);
                #json_bodies
            }
        )*

        impl #kr::RegionValues for Regions {
            fn value(&self, f: usize, j: usize) -> #kr::Value {
                let _ = j;
                match f {
                    #(#indices => #values,)*
                    _ => #kr::Value::Null,
                }
            }
        }

        impl #kr::TypedRegions for Regions {
            #[inline(always)]
            fn takes(f: usize) -> bool {
                let _ = f;
                false #(|| f == #indices)*
            }

            #[inline]
            fn close(
                &mut self,
                f: usize,
                parsed: #kr::Value,
                captures: &mut [(::std::string::String, ::std::string::String)],
            ) -> ::core::result::Result<usize, #kr::Value> {
                let _ = captures;
                match f {
                    #(#indices => {
                        #closes
                    })*
                    _ => ::core::result::Result::Err(parsed),
                }
            }

            #[inline]
            fn close_json(
                &mut self,
                f: usize,
                text: &str,
                json_depth: usize,
                captures: &mut [(::std::string::String, ::std::string::String)],
            ) -> ::core::option::Option<usize> {
                let _ = (text, json_depth, &captures);
                match f {
                    #(#json_indices => {
                        let mut found: [::core::option::Option<#kr::Value>; #json_counts] =
                            ::core::array::from_fn(|_| ::core::option::Option::None);
                        if !#kr::json_object_entries(text, json_depth, &[#(#json_keys),*], &mut found) {
                            return ::core::option::Option::None;
                        }
                        let value = #json_builders(&mut found, captures)?;
                        self.#json_members.push(value);
                        ::core::option::Option::Some(self.#json_members.len() - 1)
                    })*
                    _ => ::core::option::Option::None,
                }
            }

            fn count(&self, f: usize) -> usize {
                match f {
                    #(#indices => self.#members.len(),)*
                    _ => 0,
                }
            }

            fn clear(&mut self, f: usize) {
                match f {
                    #(#indices => self.#members.clear(),)*
                    _ => {}
                }
            }

            fn spill(&mut self, f: usize) -> ::std::vec::Vec<#kr::Value> {
                match f {
                    #(#indices => ::core::mem::take(&mut self.#members)
                        .iter()
                        .map(#kr::Typed::to_value)
                        .collect(),)*
                    _ => ::std::vec::Vec::new(),
                }
            }
        }

        impl Regions {
            /// Puts the values back into the message's fields, as the
            /// engine would have built them (for the dict form).
            pub fn into_fields(mut self, fields: &mut #kr::FieldValues) {
                #(
                    if !self.#members.is_empty() {
                        if let ::core::option::Option::Some(slot) = fields.get_mut(#indices) {
                            *slot = #kr::Value::List(#kr::TypedRegions::spill(&mut self, #indices));
                        }
                    }
                )*
                let _ = (&mut self, fields);
            }
        }
    };
    (code, read)
}
