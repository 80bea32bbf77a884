//! `response_template!`: compiles a response template into a module at
//! build time. A thin shim over `retort-codegen`; use it through the
//! `retort` crate, which re-exports it.

use proc_macro::TokenStream;
use retort_codegen::ModuleOptions;
use std::path::{Path, PathBuf};
use syn::parse::{Parse, ParseStream};
use syn::{Ident, LitStr, Token};

/// Compiles a response template (a JSON file) into a module of the same
/// name (`templates/qwen3-coder.json` → `mod qwen3_coder`).
///
/// ```ignore
/// retort::response_template!("templates/smollm3.json");
/// retort::response_template!("templates/qwen3.json", name = qwen);      // module name
/// retort::response_template!("templates/qwen3.json", crate = ::my_retort); // renamed runtime
/// ```
///
/// The path is relative to the using crate's `CARGO_MANIFEST_DIR`; editing
/// the file rebuilds the crate. A broken template is a compile error on the
/// path, with the JSON line and column, a snippet and the rule broken.
#[proc_macro]
pub fn response_template(input: TokenStream) -> TokenStream {
    let args = match syn::parse::<Args>(input) {
        Ok(a) => a,
        Err(e) => return e.to_compile_error().into(),
    };
    expand(&args).into()
}

struct Args {
    path: LitStr,
    name: Option<Ident>,
    krate: Option<syn::Path>,
}

impl Parse for Args {
    fn parse(input: ParseStream<'_>) -> syn::Result<Args> {
        let path: LitStr = input.parse()?;
        let mut args = Args {
            path,
            name: None,
            krate: None,
        };
        while !input.is_empty() {
            input.parse::<Token![,]>()?;
            if input.is_empty() {
                break;
            }
            if input.peek(Token![crate]) {
                input.parse::<Token![crate]>()?;
                input.parse::<Token![=]>()?;
                args.krate = Some(input.parse()?);
                continue;
            }
            let key: Ident = input.parse()?;
            input.parse::<Token![=]>()?;
            match key.to_string().as_str() {
                "name" => args.name = Some(input.parse()?),
                other => {
                    return Err(syn::Error::new(
                        key.span(),
                        format!(
                            "unknown argument `{other}`; expected `name = ident` or `crate = path`"
                        ),
                    ));
                }
            }
        }
        Ok(args)
    }
}

fn expand(args: &Args) -> proc_macro2::TokenStream {
    let rel = args.path.value();
    let base = std::env::var_os("CARGO_MANIFEST_DIR").map(PathBuf::from);
    let full = match &base {
        Some(dir) => dir.join(&rel),
        None => PathBuf::from(&rel),
    };
    let stem = Path::new(&rel)
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("template");
    let name = args
        .name
        .as_ref()
        .map_or_else(|| retort_codegen::module_name(stem), |n| n.to_string());
    let crate_path = args.krate.as_ref().map_or_else(
        || "::retort".to_owned(),
        |p| quote::quote!(#p).to_string().replace(' ', ""),
    );
    let json = std::fs::read_to_string(&full).map_err(|e| {
        format!(
            "cannot read the template `{rel}`: {e}\n  looked at: {}\n  (paths are relative to the crate's CARGO_MANIFEST_DIR{})",
            full.display(),
            base.as_ref()
                .map_or_else(|| ", which is not set".to_owned(), |b| format!(", {}", b.display()))
        )
    });
    let opts = ModuleOptions {
        name,
        crate_path,
        display_path: rel.clone(),
        track_path: json.is_ok().then(|| full.display().to_string()),
    };
    let span = args.path.span();
    retort_codegen::expand_macro(json, &opts, |message| {
        syn::Error::new(span, message).to_compile_error()
    })
}
