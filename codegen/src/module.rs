//! One template → one Rust module.

use crate::lower::Lowering;
use crate::types::{self, Member, Model, Presence, Ty};
use proc_macro2::{Ident, Span, TokenStream};
use quote::{format_ident, quote};
use retort::Template;
use retort::Value;
use retort::lit::ToLit;
use std::str::FromStr;

/// How to write a module.
#[derive(Clone, Debug)]
pub struct ModuleOptions {
    /// The module's name.
    pub name: String,
    /// The path of the runtime crate (`::retort`).
    pub crate_path: String,
    /// The template file, as shown in docs (`templates/smollm3.json`).
    pub display_path: String,
    /// An absolute path to `include_bytes!`, so that editing the file
    /// rebuilds the crate (the macro's way; build scripts use
    /// `rerun-if-changed` instead).
    pub track_path: Option<String>,
}

/// The private API's path under the runtime crate the user named.
fn private_path(crate_path: &str) -> Result<syn::Path, String> {
    let text = format!("{}::__private", crate_path.trim_end_matches("::"));
    syn::parse_str(&text).map_err(|e| format!("`{crate_path}` is not a crate path: {e}"))
}

/// The module's name for a template file (`qwen3-coder.json` →
/// `qwen3_coder`).
pub fn module_name(file_stem: &str) -> String {
    types::snake_ident(file_stem)
}

/// The type of a value.
fn ty_tokens(ty: &Ty, model: &Model, kr: &TokenStream) -> TokenStream {
    match ty {
        Ty::Str => quote!(::std::string::String),
        Ty::Int => quote!(#kr::Int),
        Ty::Float => quote!(f64),
        Ty::Bool => quote!(bool),
        Ty::Any => quote!(#kr::Value),
        Ty::Map => quote!(#kr::Map),
        Ty::List(item) => {
            let item = ty_tokens(item, model, kr);
            quote!(::std::vec::Vec<#item>)
        }
        Ty::Struct(i) => {
            let name = format_ident!("{}", model.structs[*i].name);
            quote!(#name)
        }
    }
}

fn member_ty(m: &Member, model: &Model, kr: &TokenStream) -> TokenStream {
    let t = ty_tokens(&m.ty, model, kr);
    match m.presence {
        Presence::Always => t,
        Presence::Nullable | Presence::Sometimes => quote!(::core::option::Option<#t>),
    }
}

/// Struct fields, their reading from a dict and their writing to one.
///
/// Returns the field declarations; a block reading the struct `name` out
/// of an owned `map: Map`; the writes of each member into `out`; and a
/// block telling whether `map: &Map` fits the struct. Reading and the fit
/// test each go over the dict's entries once, matching keys as strings:
/// these dicts hold a few short keys, where hashing each key (and shifting
/// the entries after each one taken out) cost more than the comparisons.
/// Values are converted after the pass, in member order, so that the
/// first mismatch reported is the one a member-by-member read would
/// report.
fn members_code(
    name: &Ident,
    members: &[Member],
    model: &Model,
    kr: &TokenStream,
    kr_str: &str,
) -> (Vec<TokenStream>, TokenStream, Vec<TokenStream>, TokenStream) {
    let mut decls = Vec::new();
    let mut writes = Vec::new();
    let mut slots = Vec::new();
    let mut read_arms = Vec::new();
    let mut reads = Vec::new();
    let mut fit_arms = Vec::new();
    let mut required = Vec::new();
    for (i, m) in members.iter().enumerate() {
        let slot = format_ident!("slot_{}", i);
        let ident = format_ident!("{}", m.ident);
        let key = &m.key;
        let ty = member_ty(m, model, kr);
        let doc = format!("`{key}`");
        let skip = format!("{kr_str}::skip_none");
        let serde_attr = match m.presence {
            Presence::Sometimes => quote!(#[serde(rename = #key, skip_serializing_if = #skip)]),
            _ => quote!(#[serde(rename = #key)]),
        };
        decls.push(quote! {
            #[doc = #doc]
            #serde_attr
            pub #ident: #ty
        });
        let plain = ty_tokens(&m.ty, model, kr);
        slots.push(quote! {
            let mut #slot: ::core::option::Option<#kr::Value> = ::core::option::Option::None;
        });
        read_arms.push(quote!(#key => #slot = ::core::option::Option::Some(value),));
        reads.push(match m.presence {
            Presence::Always => quote!(#ident: #kr::convert_required(#slot, #key)?),
            Presence::Nullable => quote!(#ident: #kr::convert_nullable(#slot, #key)?),
            Presence::Sometimes => quote!(#ident: #kr::convert_optional(#slot, #key)?),
        });
        fit_arms.push(match m.presence {
            Presence::Always => {
                required.push(slot.clone());
                quote!(#key => { #slot = true; ok = ok && <#plain as #kr::Typed>::fits(value); })
            }
            Presence::Nullable => quote! {
                #key => ok = ok && (::core::matches!(value, #kr::Value::Null)
                    || <#plain as #kr::Typed>::fits(value)),
            },
            Presence::Sometimes => quote!(#key => ok = ok && <#plain as #kr::Typed>::fits(value),),
        });
        writes.push(match m.presence {
            Presence::Always => quote! {
                out.insert(#key.into(), #kr::Typed::to_value(&self.#ident));
            },
            Presence::Nullable => quote! {
                out.insert(#key.into(), match &self.#ident {
                    ::core::option::Option::Some(v) => #kr::Typed::to_value(v),
                    ::core::option::Option::None => #kr::Value::Null,
                });
            },
            Presence::Sometimes => quote! {
                if let ::core::option::Option::Some(v) = &self.#ident {
                    out.insert(#key.into(), #kr::Typed::to_value(v));
                }
            },
        });
    }
    let read = quote! {
        #(#slots)*
        for (key, value) in map {
            match key.as_str() {
                #(#read_arms)*
                _ => {}
            }
        }
        ::core::result::Result::Ok(#name { #(#reads,)* })
    };
    let fits = quote! {
        let mut ok = true;
        #(let mut #required = false;)*
        for (key, value) in map {
            match key.as_str() {
                #(#fit_arms)*
                _ => {}
            }
        }
        ok #(&& #required)*
    };
    (decls, read, writes, fits)
}

/// The message read from the values of its fields (what the parser built,
/// see `Parser::finalize_typed`), by field index rather than by key, and
/// from the generated `Regions` for the fields built in their types.
///
/// Returns a block telling whether `fields: &FieldValues` fits the message
/// once the defaults are applied, and a block reading the message out of
/// `mut fields: FieldValues`. Both follow `FieldValues::into_map`: a field's
/// value replaces its default; a field without a default is left out when
/// its value is empty.
fn fields_code(
    members: &[Member],
    template: &Template,
    model: &Model,
    typed: &[(String, Ident)],
    kr: &TokenStream,
) -> (TokenStream, TokenStream) {
    let mut checks = Vec::new();
    let mut reads = Vec::new();
    for m in members {
        let ident = format_ident!("{}", m.ident);
        let key = &m.key;
        let plain = ty_tokens(&m.ty, model, kr);
        let field = template.field_index(key);
        // A field the generated `Regions` builds: its values are there
        // (the message's entry is an empty list, in the dict's order),
        // unless a region needed the engine's transform, which moved them
        // all into the entry.
        if let (Some(i), Some((_, member))) = (field, typed.iter().find(|(k, _)| k == key)) {
            checks.push(quote! {
                fields.get(#i).is_none_or(|value| value.is_empty_value()
                    || <#plain as #kr::Typed>::fits(value))
            });
            reads.push(quote! {
                #ident: if regions.#member.is_empty() {
                    #kr::convert_optional(fields.take(#i).filter(|value| !value.is_empty_value()), #key)?
                } else {
                    ::core::option::Option::Some(::core::mem::take(&mut regions.#member))
                }
            });
            continue;
        }
        let default = template.defaults().get(key);
        // The default in typed form: a string literal directly, anything
        // else converted from the template's own copy.
        let default_expr = match (default, m.presence) {
            (Some(Value::Str(s)), Presence::Always) if m.ty == Ty::Str => {
                quote!(::std::string::String::from(#s))
            }
            (_, Presence::Always) => {
                quote!(#kr::convert_required(template().defaults().get(#key).cloned(), #key)?)
            }
            (_, Presence::Nullable) => {
                quote!(#kr::convert_nullable(template().defaults().get(#key).cloned(), #key)?)
            }
            (_, Presence::Sometimes) => quote!(::core::option::Option::None),
        };
        let Some(i) = field else {
            // A key only the defaults write (`role`): its default fits by
            // derivation.
            reads.push(quote!(#ident: #default_expr));
            continue;
        };
        match m.presence {
            // A value the model wrote replaces the default (`null` fits a
            // nullable member whatever its type).
            Presence::Always | Presence::Nullable => {
                let (null_fits, convert) = if m.presence == Presence::Always {
                    (quote!(), quote!(convert_required))
                } else {
                    (
                        quote!(::core::matches!(value, #kr::Value::Null) ||),
                        quote!(convert_nullable),
                    )
                };
                checks.push(quote! {
                    fields.get(#i).is_none_or(|value| #null_fits <#plain as #kr::Typed>::fits(value))
                });
                reads.push(quote! {
                    #ident: match fields.take(#i) {
                        ::core::option::Option::Some(value) => #kr::#convert(::core::option::Option::Some(value), #key)?,
                        ::core::option::Option::None => #default_expr,
                    }
                });
            }
            Presence::Sometimes => {
                checks.push(quote! {
                    fields.get(#i).is_none_or(|value| value.is_empty_value()
                        || <#plain as #kr::Typed>::fits(value))
                });
                reads.push(quote! {
                    #ident: #kr::convert_optional(fields.take(#i).filter(|value| !value.is_empty_value()), #key)?
                });
            }
        }
    }
    let fits = if checks.is_empty() {
        quote!(true)
    } else {
        quote!(#(#checks)&&*)
    };
    let read = quote!(::core::result::Result::Ok(Message { #(#reads,)* }));
    (fits, read)
}

/// An accessor expression giving `Option<&str>` for a message key.
fn str_access(m: &Member) -> TokenStream {
    let ident = format_ident!("{}", m.ident);
    match (&m.ty, m.presence) {
        (Ty::Str, Presence::Always) => quote!(::core::option::Option::Some(self.#ident.as_str())),
        (Ty::Str, _) => quote!(self.#ident.as_deref()),
        (Ty::Any, Presence::Always) => quote!(self.#ident.as_str()),
        (Ty::Any, _) => quote!(self.#ident.as_ref().and_then(|v| v.as_str())),
        _ => quote!(::core::option::Option::None),
    }
}

/// Generates the module for `template` (already validated).
pub fn generate(template: &Template, opts: &ModuleOptions) -> Result<TokenStream, String> {
    let kr_str = format!("{}::__private", opts.crate_path.trim_end_matches("::"));
    let kr = private_path(&opts.crate_path)?;
    let kr = quote!(#kr);
    let model = types::derive(template);

    // The compiled template: automata as statics, the rest as code. Inside
    // the module the runtime's private API goes by a short alias.
    let mut lowering = Lowering::new(quote!(__rt));
    let assemble = lowering.expr(&template.to_lit());
    let machine =
        crate::machine::generate(template, &quote!(__rt), quote!(template()), &mut lowering);
    let statics = lowering.statics();

    let mod_name = Ident::new(&opts.name, Span::call_site());
    // A module's outer docs resolve links in the scope around it, so the
    // links name the module.
    let m = &opts.name;
    let header = format!(
        " @generated by retort-codegen from `{}`. Do not edit.\n\n The parser for this template: [`Parser`]({m}::Parser) streams model output into\n [`Message`]({m}::Message)s; [`Field`]({m}::Field) names the regions in events.",
        opts.display_path
    );
    let track = opts.track_path.as_ref().map(|p| {
        quote! {
            // Rebuild when the template changes.
            const _: &[u8] = ::core::include_bytes!(#p);
        }
    });

    // The field enum.
    let variants: Vec<Ident> = model
        .variants
        .iter()
        .map(|(_, v)| format_ident!("{}", v))
        .collect();
    let variant_names: Vec<&str> = model.variants.iter().map(|(n, _)| n.as_str()).collect();
    let variant_docs: Vec<String> = variant_names.iter().map(|n| format!("`{n}`")).collect();

    // `#[serde(crate = "...")]` takes the path as a string.
    let serde_crate = format!("{kr_str}::serde");

    // Structs for transforms.
    let mut struct_items = Vec::new();
    for def in &model.structs {
        let name = format_ident!("{}", def.name);
        let (decls, read, writes, fits) = members_code(&name, &def.members, &model, &kr, &kr_str);
        let doc = format!(" A value built by a transform of `{}`.", opts.display_path);
        struct_items.push(quote! {
            #[doc = #doc]
            #[derive(Clone, Debug, PartialEq, #kr::serde::Serialize)]
            #[serde(crate = #serde_crate)]
            pub struct #name {
                #(#decls,)*
            }

            impl #kr::Typed for #name {
                fn fits(value: &#kr::Value) -> bool {
                    match value {
                        #kr::Value::Map(map) => { #fits }
                        _ => false,
                    }
                }
                fn from_value(value: #kr::Value) -> ::core::result::Result<Self, #kr::Mismatch> {
                    let map = #kr::expect_map(value)?;
                    #read
                }
                fn to_value(&self) -> #kr::Value {
                    let mut out = #kr::Map::default();
                    #(#writes)*
                    #kr::Value::Map(out)
                }
            }
        });
    }
    let message_name = format_ident!("Message");
    let (decls, read, writes, fits) =
        members_code(&message_name, &model.message, &model, &kr, &kr_str);
    let (regions, typed) = crate::regions::generate(template, &model, &kr);
    let (fields_fit, fields_read) = fields_code(&model.message, template, &model, &typed, &kr);
    let content = model
        .message
        .iter()
        .find(|m| m.key == "content")
        .map_or(quote!(::core::option::Option::None), str_access);
    let reasoning_chain: Vec<TokenStream> = retort::typed::REASONING_KEYS
        .iter()
        .filter_map(|k| model.message.iter().find(|m| m.key == *k))
        .map(str_access)
        .collect();
    let reasoning = if reasoning_chain.is_empty() {
        quote!(::core::option::Option::None)
    } else {
        let first = &reasoning_chain[0];
        let rest = &reasoning_chain[1..];
        quote!(#first #(.or_else(|| #rest))*)
    };
    let tool_calls = match model.message.iter().find(|m| m.key == "tool_calls") {
        None => quote!(::std::vec::Vec::new()),
        Some(m) => {
            let ident = format_ident!("{}", m.ident);
            match m.presence {
                Presence::Always => {
                    quote!(#kr::tool_calls_of(&#kr::Typed::to_value(&self.#ident)))
                }
                _ => quote! {
                    match &self.#ident {
                        ::core::option::Option::Some(v) => #kr::tool_calls_of(&#kr::Typed::to_value(v)),
                        ::core::option::Option::None => ::std::vec::Vec::new(),
                    }
                },
            }
        }
    };
    let message_doc = format!(
        " A message parsed with `{}`: one field per key of the reference's dict.",
        opts.display_path
    );

    let code = quote! {
        #[doc = #header]
        #[allow(clippy::all, clippy::pedantic, non_camel_case_types, dead_code, unused_imports)]
        pub mod #mod_name {
            use #kr as __rt;
            const _: () = __rt::COMPAT_0_1;
            #track

            #(#statics)*

            /// The compiled template, put together once per process from its
            /// static automata (nothing is parsed or compiled).
            pub fn template() -> &'static #kr::Template {
                static TEMPLATE: #kr::LazyLock<#kr::Template> = #kr::LazyLock::new(|| #assemble);
                &TEMPLATE
            }

            #machine

            /// The template's fields, in template order.
            #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
            pub enum Field {
                #(#[doc = #variant_docs] #variants,)*
            }

            impl Field {
                /// Every field, in template order.
                pub const ALL: &'static [Field] = &[#(Field::#variants),*];

                /// The field's name (the message key).
                pub const fn name(self) -> &'static str {
                    match self {
                        #(Field::#variants => #variant_names,)*
                    }
                }
            }

            impl ::core::convert::AsRef<str> for Field {
                fn as_ref(&self) -> &str {
                    self.name()
                }
            }

            impl ::core::fmt::Display for Field {
                fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                    f.write_str(self.name())
                }
            }

            impl #kr::FieldId for Field {
                const ALL: &'static [Field] = Field::ALL;
                fn name(self) -> &'static str {
                    Field::name(self)
                }
            }

            #(#struct_items)*

            #regions

            #[doc = #message_doc]
            #[derive(Clone, Debug, PartialEq, #kr::serde::Serialize)]
            #[serde(crate = #serde_crate)]
            pub struct Message {
                #(#decls,)*
            }

            impl Message {
                /// Reads a message from the run-time form (the dict the
                /// reference returns).
                pub fn from_map(map: &#kr::Map) -> ::core::result::Result<Message, #kr::Mismatch> {
                    Message::from_owned(map.clone())
                }

                /// Whether a message in the run-time form fits these types.
                pub fn fits(map: &#kr::Map) -> bool {
                    #fits
                }

                /// Reads a message, moving its values.
                pub fn from_owned(map: #kr::Map) -> ::core::result::Result<Message, #kr::Mismatch> {
                    #read
                }

                /// Whether the values of a message's fields, as the parser
                /// built them, fit these types once the template's defaults
                /// are applied.
                pub fn fields_fit(fields: &#kr::FieldValues) -> bool {
                    #fields_fit
                }

                /// Reads a message from the values of its fields, as the
                /// parser built them: by field, without the dict, with the
                /// values built in this template's types taken from
                /// `regions`. The template's defaults are applied and empty
                /// values left out, as in the run-time form.
                pub fn from_fields(mut fields: #kr::FieldValues, mut regions: Regions) -> ::core::result::Result<Message, #kr::Mismatch> {
                    let _ = &mut regions;
                    #fields_read
                }

                /// The message as the reference's dict.
                pub fn to_map(&self) -> #kr::Map {
                    let mut out = #kr::Map::default();
                    #(#writes)*
                    out
                }

                /// The message as the reference's dict, as a value.
                pub fn to_value(&self) -> #kr::Value {
                    #kr::Value::Map(self.to_map())
                }
            }

            impl #kr::AssistantMessage for Message {
                fn content(&self) -> ::core::option::Option<&str> {
                    #content
                }
                fn reasoning(&self) -> ::core::option::Option<&str> {
                    #reasoning
                }
                fn tool_calls(&self) -> ::std::vec::Vec<#kr::ToolCall> {
                    #tool_calls
                }
                fn to_value(&self) -> #kr::Value {
                    Message::to_value(self)
                }
            }

            /// A streaming parser for one generation.
            #[derive(Debug)]
            pub struct Parser {
                inner: #kr::Parser<'static, Machine>,
            }

            impl Parser {
                /// A parser for a generation that followed `prefix` (the
                /// prompt; `""` if the generation holds the whole message).
                pub fn new(prefix: &str) -> ::core::result::Result<Parser, #kr::ParseError> {
                    ::core::result::Result::Ok(Parser { inner: #kr::Parser::with_machine(Machine, prefix, #kr::ParserOptions::new(), ::core::option::Option::None)? })
                }

                /// A parser that also casts tool-call arguments by the types
                /// declared in `tools` (OpenAI-style definitions).
                pub fn with_tools(prefix: &str, tools: &#kr::Value) -> ::core::result::Result<Parser, #kr::ParseError> {
                    ::core::result::Result::Ok(Parser { inner: #kr::Parser::with_machine(Machine, prefix, #kr::ParserOptions::new(), ::core::option::Option::Some(tools))? })
                }

                /// A parser with `options` (lenient mode, work budget,
                /// limits) and, with `tools`, arguments cast by their types.
                pub fn with_options(prefix: &str, options: #kr::ParserOptions, tools: ::core::option::Option<&#kr::Value>) -> ::core::result::Result<Parser, #kr::ParseError> {
                    ::core::result::Result::Ok(Parser { inner: #kr::Parser::with_machine(Machine, prefix, options, tools)? })
                }

                /// (Lenient mode) the regions that gave no value, with their text.
                pub fn malformed(&self) -> &[#kr::Malformed] {
                    self.inner.malformed()
                }

                /// The values the template's semantics replaced (a field
                /// that does not repeat, written again), in order.
                pub fn replaced(&self) -> &[#kr::Replaced] {
                    self.inner.replaced()
                }

                /// The generation's text that no region claimed, in order.
                pub fn unclaimed(&self) -> &[#kr::Unclaimed] {
                    self.inner.unclaimed()
                }

                /// Whether the prompt (not empty) lacks the start anchor,
                /// so that all of it was parsed as output.
                pub fn anchor_missing(&self) -> bool {
                    self.inner.anchor_missing()
                }

                /// The events the prompt produced, to replay first.
                pub fn initial_events(&self) -> &[#kr::OwnedEvent] {
                    self.inner.initial_events()
                }

                /// Feeds the next piece of the generation.
                #[inline]
                pub fn feed<'a>(&'a mut self, text: &'a str) -> ::core::result::Result<#kr::TypedEvents<'a, Field>, #kr::ParseError> {
                    self.inner.feed(text).map(#kr::Events::typed)
                }

                /// Reserves room for `additional` more bytes of region text, so
                /// that streaming that much allocates nothing.
                pub fn reserve(&mut self, additional: usize) {
                    self.inner.reserve(additional)
                }

                /// Feeds raw bytes; a UTF-8 sequence split across calls is kept.
                pub fn feed_bytes(&mut self, bytes: &[u8]) -> ::core::result::Result<#kr::TypedEvents<'_, Field>, #kr::ParseError> {
                    self.inner.feed_bytes(bytes).map(#kr::Events::typed)
                }

                /// Ends the generation: the typed message and the last events.
                pub fn finalize(&mut self) -> ::core::result::Result<(Message, #kr::TypedEvents<'_, Field>), #kr::ParseError> {
                    let (mut fields, regions, events) = self.inner.finalize_typed()?;
                    if !Message::fields_fit(&fields) {
                        // Keep the message whole in the error; find where.
                        regions.into_fields(&mut fields);
                        let map = fields.into_map(template());
                        return match Message::from_map(&map) {
                            ::core::result::Result::Err(m) => ::core::result::Result::Err(#kr::mismatch_error(m, &map)),
                            ::core::result::Result::Ok(_) => ::core::result::Result::Err(#kr::mismatch_error(
                                #kr::Mismatch { path: ::std::string::String::new(), expected: "Message", found: "dict" }, &map)),
                        };
                    }
                    match Message::from_fields(fields, regions) {
                        ::core::result::Result::Ok(message) => ::core::result::Result::Ok((message, events.typed())),
                        ::core::result::Result::Err(m) => ::core::result::Result::Err(#kr::conversion_bug(m)),
                    }
                }

                /// Ends the generation with the message in its run-time form.
                pub fn finalize_map(&mut self) -> ::core::result::Result<(#kr::Map, #kr::TypedEvents<'_, Field>), #kr::ParseError> {
                    let (map, events) = self.inner.finalize()?;
                    ::core::result::Result::Ok((map, events.typed()))
                }

                /// The engine underneath (for statistics such as bytes scanned).
                pub fn engine(&self) -> &#kr::Parser<'static, Machine> {
                    &self.inner
                }

                /// The engine underneath, running this template's generated
                /// machine: for layers over the generic parser, such as
                /// `retort::openai::ChunkStream::with_parser`.
                pub fn into_engine(self) -> #kr::Parser<'static, Machine> {
                    self.inner
                }
            }

            /// Parses a whole generation at once.
            pub fn parse(text: &str, prefix: &str) -> ::core::result::Result<Message, #kr::ParseError> {
                let mut parser = Parser::new(prefix)?;
                parser.feed(text)?;
                ::core::result::Result::Ok(parser.finalize()?.0)
            }
        }
    };
    Ok(code)
}

/// The module's outline without a template: what `response_template!`
/// emits next to its `compile_error!`, so that code using the module does
/// not add errors of its own.
pub fn skeleton(opts: &ModuleOptions) -> TokenStream {
    let Ok(kr) = TokenStream::from_str(&format!(
        "{}::__private",
        opts.crate_path.trim_end_matches("::")
    )) else {
        return TokenStream::new();
    };
    let mod_name = Ident::new(&opts.name, Span::call_site());
    quote! {
        #[allow(dead_code, unused_variables, clippy::all)]
        pub mod #mod_name {
            /// The template's fields (the template did not compile).
            #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
            pub enum Field {}
            /// A parsed message (the template did not compile).
            #[derive(Clone, Debug, PartialEq)]
            pub struct Message {}
            /// The parser (the template did not compile).
            #[derive(Debug)]
            pub struct Parser {}
            impl Parser {
                /// See the compiled module.
                pub fn new(prefix: &str) -> ::core::result::Result<Parser, #kr::ParseError> {
                    ::core::result::Result::Ok(Parser {})
                }
            }
            /// See the compiled module.
            pub fn parse(text: &str, prefix: &str) -> ::core::result::Result<Message, #kr::ParseError> {
                ::core::result::Result::Ok(Message {})
            }
        }
    }
}
