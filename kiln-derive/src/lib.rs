//! # kiln-derive: `#[derive(Frozen)]` for Kiln
//!
//! Implements kiln-nostd's `Frozen`, `Encode` and `Decode` for a struct with named
//! fields. The struct is a Kiln `struct{...}`: one container holding its
//! fields in declaration order, each under its Rust name. Everything comes
//! from the struct's own field types, so the schema (type text), the schema
//! hash and the minimum size always agree with the bytes that are written
//! and read.
//!
//! Use it through kiln-nostd's `derive` feature, which re-exports the macro
//! next to the trait of the same name (as serde does):
//!
//! ```
//! use kiln_nostd::{from_bytes, frame::hash_of_text, to_slice, Frozen};
//!
//! #[derive(Frozen, Debug, PartialEq)]
//! struct Reading<'a> {
//!     id: i64,
//!     name: &'a str,
//!     tags: heapless::Vec<u16, 4>,
//!     flag: Option<u32>,
//! }
//!
//! let text = Reading::SCHEMA.to_string();
//! assert_eq!(text, "struct{id:i64,name:str,tags:list<u16>,flag:opt<u32>,}");
//! assert_eq!(Reading::HASH, hash_of_text(&text).unwrap());
//! assert_eq!(Reading::MIN_SIZE, 8 + 4 + 4 + 1);
//!
//! let value = Reading { id: 7, name: "t", tags: heapless::Vec::new(), flag: None };
//! let mut buf = [0u8; 64];
//! let bytes = to_slice(&value, &mut buf).unwrap();
//! assert_eq!(bytes, &[7, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, b't', 0, 0, 0, 0, 0]);
//! assert_eq!(from_bytes::<Reading>(bytes).unwrap(), value);
//! ```
//!
//! ## What it generates
//!
//! For `struct Reading<'a> { id: i64, name: &'a str }`:
//!
//! ```ignore
//! impl<'a> ::kiln_nostd::Frozen for Reading<'a> {
//!     const SCHEMA: ::kiln_nostd::Schema = ::kiln_nostd::Schema::Struct(&[
//!         ::kiln_nostd::Field { name: "id", ty: &<i64 as ::kiln_nostd::Frozen>::SCHEMA },
//!         ::kiln_nostd::Field { name: "name", ty: &<&'a str as ::kiln_nostd::Frozen>::SCHEMA },
//!     ]);
//! }
//! impl<'a> ::kiln_nostd::Encode for Reading<'a> {
//!     fn encode<__KilnSink: ::kiln_nostd::Sink>(
//!         &self,
//!         __kiln_w: &mut ::kiln_nostd::Writer<__KilnSink>,
//!     ) -> ::kiln_nostd::Result<()> {
//!         ::kiln_nostd::__private::encode_struct(__kiln_w, |__kiln_w| {
//!             <i64 as ::kiln_nostd::Encode>::encode(&self.id, __kiln_w)?;
//!             <&'a str as ::kiln_nostd::Encode>::encode(&self.name, __kiln_w)?;
//!             ::core::result::Result::Ok(())
//!         })
//!     }
//! }
//! impl<'de: 'a, 'a: 'de> ::kiln_nostd::Decode<'de> for Reading<'a> {
//!     fn decode(__kiln_r: &mut ::kiln_nostd::Reader<'de>) -> ::kiln_nostd::Result<Self> {
//!         ::kiln_nostd::__private::decode_derived(
//!             __kiln_r,
//!             |__kiln_r| ::core::result::Result::Ok(Self {
//!                 id: <i64 as ::kiln_nostd::Decode<'de>>::decode(__kiln_r)?,
//!                 name: <&'a str as ::kiln_nostd::Decode<'de>>::decode(__kiln_r)?,
//!             }),
//!             |__kiln_r| ::core::result::Result::Ok(Self {
//!                 id: <i64 as ::kiln_nostd::Decode<'de>>::decode(__kiln_r)?,
//!                 name: <&'a str as ::kiln_nostd::Decode<'de>>::decode(__kiln_r)?,
//!             }),
//!         )
//!     }
//! }
//! ```
//!
//! The field reads appear twice: `decode_derived` (a `decode_struct`
//! with a fast path) runs the first over exactly the struct's bytes when
//! every field has a fixed width (scalars, and structs of them) and all
//! of them are there, so that no field keeps a bounds check of its own;
//! the second runs otherwise and reports errors exactly as field-by-field
//! reading does. Each closure has one call site, so the compiler inlines
//! both; for a struct with any variable-width field the first is dead
//! code and is compiled away.
//!
//! Every lifetime of the struct equals the decoder's `'de` (the value
//! borrows from the buffer); if the struct already has a lifetime named
//! `'de`, the impl picks another name. Const generic parameters and `where`
//! clauses are carried over. A field `r#type` is the Kiln field `type`. A
//! unit struct, or one without fields, is `struct{}`: zero bytes.
//!
//! ## What it refuses
//!
//! Each with a compile error on the offending item that says what to do
//! instead:
//!
//! - enums and unions: Kiln has no sum type (use a struct with `Option`
//!   fields);
//! - tuple structs: field names are part of the type text (name them);
//! - type parameters: the type text must be one fixed text (use concrete
//!   field types);
//! - field names outside ASCII `[A-Za-z_][A-Za-z0-9_]*`, which is all Kiln
//!   type text allows (Rust also accepts non-ASCII identifiers).
//!
//! A field whose type is not `Frozen` is an error pointing at that type.
//!
//! The generated code names the crate `::kiln_nostd`, so it must be a
//! dependency under that name.

#![forbid(unsafe_code)]
#![deny(missing_docs)]

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::ext::IdentExt;
use syn::spanned::Spanned;
use syn::{
    Data, DeriveInput, Error, Fields, GenericParam, Generics, Ident, Lifetime, LifetimeParam, Type,
};

/// Derives `Frozen`, `Encode` and `Decode` for a struct with named fields:
/// a Kiln `struct{...}` with the fields in declaration order, each under
/// its Rust name (`r#type` is `type`) and with the Kiln type of its Rust
/// type. Every lifetime of the struct borrows from the decoded buffer.
///
/// ```
/// use kiln_nostd::Frozen;
///
/// #[derive(Frozen)]
/// struct Batch<'a> {
///     id: i64,
///     batch: kiln_nostd::Directory<'a>,
/// }
/// assert_eq!(Batch::SCHEMA.to_string(), "struct{id:i64,batch:tensors,}");
/// assert_eq!(Batch::HASH, 0xe58aadc7552f0d82);
/// ```
///
/// Enums, unions, tuple structs, type parameters and non-ASCII field names
/// are compile errors. See the [crate docs](crate) for the generated code.
#[proc_macro_derive(Frozen)]
pub fn derive_frozen(input: proc_macro::TokenStream) -> proc_macro::TokenStream {
    let input = syn::parse_macro_input!(input as DeriveInput);
    expand(&input)
        .unwrap_or_else(|e| e.to_compile_error())
        .into()
}

/// One field of the struct: its Rust identifier (possibly raw), its Kiln
/// name and its declared type.
struct Field<'a> {
    ident: &'a Ident,
    name: String,
    ty: &'a Type,
}

fn expand(input: &DeriveInput) -> syn::Result<TokenStream> {
    let declared = declared_fields(input)?;
    let mut errors = Errors::default();
    refuse_type_parameters(&input.generics, &mut errors);
    let mut fields = Vec::new();
    for field in declared {
        // Named fields always have an identifier.
        let Some(ident) = field.ident.as_ref() else {
            continue;
        };
        match kiln_name(ident) {
            Ok(name) => fields.push(Field {
                ident,
                name,
                ty: &field.ty,
            }),
            Err(e) => errors.push(e),
        }
    }
    errors.finish()?;

    let frozen = frozen_impl(input, &fields);
    let encode = encode_impl(input, &fields);
    let decode = decode_impl(input, &fields);
    Ok(quote! {
        #frozen
        #encode
        #decode
    })
}

/// The fields of a struct with named fields (none for a unit struct), or
/// the error for everything else.
fn declared_fields(input: &DeriveInput) -> syn::Result<Vec<&syn::Field>> {
    let ident = &input.ident;
    match &input.data {
        Data::Struct(data) => match &data.fields {
            Fields::Named(named) => Ok(named.named.iter().collect()),
            Fields::Unit => Ok(Vec::new()),
            Fields::Unnamed(unnamed) => {
                let struct_token = &data.struct_token;
                Err(Error::new_spanned(
                    quote!(#struct_token #ident #unnamed),
                    "#[derive(Frozen)] does not support tuple structs: a Kiln struct's \
                     field names are part of its type text and schema hash; name the \
                     fields (`struct Name { a: A, b: B }`)",
                ))
            }
        },
        Data::Enum(data) => {
            let enum_token = &data.enum_token;
            Err(Error::new_spanned(
                quote!(#enum_token #ident),
                "#[derive(Frozen)] does not support enums: Kiln has no sum type; use a \
                 struct with one `Option` field per variant, or an integer tag field \
                 next to `Option` fields",
            ))
        }
        Data::Union(data) => {
            let union_token = &data.union_token;
            Err(Error::new_spanned(
                quote!(#union_token #ident),
                "#[derive(Frozen)] does not support unions: Kiln has no union type; use \
                 a struct with named fields (an `Option` field for each alternative)",
            ))
        }
    }
}

fn refuse_type_parameters(generics: &Generics, errors: &mut Errors) {
    for param in generics.type_params() {
        errors.push(Error::new_spanned(
            param,
            "#[derive(Frozen)] does not support type parameters: a derived struct has \
             one fixed type text and schema hash; use concrete field types (one struct \
             per instantiation), or implement Frozen, Encode and Decode by hand",
        ));
    }
}

/// The Kiln field name of a Rust field: the identifier without `r#`, which
/// must match `[A-Za-z_][A-Za-z0-9_]*`.
fn kiln_name(ident: &Ident) -> syn::Result<String> {
    let name = ident.unraw().to_string();
    let mut bytes = name.bytes();
    let first_ok = bytes
        .next()
        .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_');
    if first_ok && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_') {
        return Ok(name);
    }
    Err(Error::new(
        ident.span(),
        format!(
            "`{name}` cannot be a Kiln field name: Kiln field names are ASCII \
             `[A-Za-z_][A-Za-z0-9_]*`, because the name is spelled out in the type \
             text and its schema hash, which readers in every language compare byte \
             for byte; rename the field using only ASCII letters, digits and `_`"
        ),
    ))
}

/// A span that resolves names like the derive's own code (and counts as
/// macro output for lints) but is reported at `at`: errors about a field's
/// type point at that type.
fn at_span(at: &impl Spanned) -> Span {
    Span::call_site().located_at(at.span())
}

fn frozen_impl(input: &DeriveInput, fields: &[Field]) -> TokenStream {
    let ident = &input.ident;
    let (impl_generics, ty_generics, where_clause) = input.generics.split_for_impl();
    let schema_fields = fields.iter().map(|f| {
        let (name, ty) = (&f.name, f.ty);
        quote_spanned! {at_span(ty)=>
            ::kiln_nostd::Field {
                name: #name,
                ty: &<#ty as ::kiln_nostd::Frozen>::SCHEMA,
            }
        }
    });
    quote! {
        #[automatically_derived]
        impl #impl_generics ::kiln_nostd::Frozen for #ident #ty_generics #where_clause {
            const SCHEMA: ::kiln_nostd::Schema = ::kiln_nostd::Schema::Struct(&[
                #(#schema_fields),*
            ]);
        }
    }
}

fn encode_impl(input: &DeriveInput, fields: &[Field]) -> TokenStream {
    let ident = &input.ident;
    let (impl_generics, ty_generics, where_clause) = input.generics.split_for_impl();
    let writes = fields.iter().map(|f| {
        let (field, ty) = (f.ident, f.ty);
        quote_spanned! {at_span(ty)=>
            <#ty as ::kiln_nostd::Encode>::encode(&self.#field, __kiln_w)?;
        }
    });
    quote! {
        #[automatically_derived]
        impl #impl_generics ::kiln_nostd::Encode for #ident #ty_generics #where_clause {
            fn encode<__KilnSink: ::kiln_nostd::Sink>(
                &self,
                __kiln_w: &mut ::kiln_nostd::Writer<__KilnSink>,
            ) -> ::kiln_nostd::Result<()> {
                ::kiln_nostd::__private::encode_struct(__kiln_w, |__kiln_w| {
                    #(#writes)*
                    ::core::result::Result::Ok(())
                })
            }
        }
    }
}

fn decode_impl(input: &DeriveInput, fields: &[Field]) -> TokenStream {
    let ident = &input.ident;
    let de = fresh_lifetime(&input.generics);
    // impl<'de: 'a + 'b, 'a: 'de, 'b: 'de, const N: usize>: every lifetime
    // of the struct is 'de.
    let mut generics = input.generics.clone();
    let struct_lifetimes: Vec<Lifetime> = generics
        .lifetimes()
        .map(|param| param.lifetime.clone())
        .collect();
    for param in generics.lifetimes_mut() {
        param.bounds.push(de.clone());
    }
    let mut de_param = LifetimeParam::new(de.clone());
    de_param.bounds.extend(struct_lifetimes);
    generics.params.insert(0, GenericParam::Lifetime(de_param));
    let (impl_generics, _, _) = generics.split_for_impl();
    let (_, ty_generics, where_clause) = input.generics.split_for_impl();

    let reads = fields.iter().map(|f| {
        let (field, ty) = (f.ident, f.ty);
        let read = quote_spanned! {at_span(ty)=>
            <#ty as ::kiln_nostd::Decode<#de>>::decode(__kiln_r)?
        };
        quote!(#field: #read,)
    });
    // The reads twice: kiln_nostd::__private::decode_derived runs the first over
    // exactly the struct's bytes when they are all fixed-width and
    // present (no per-field bounds checks), the second otherwise.
    let reads: Vec<TokenStream> = reads.collect();
    let in_place = in_place_decode(fields, &de);
    // Decoding into a caller's struct (from_bytes_into): each field read
    // where it lies, unless every field is fixed-width, where one read of
    // the whole struct is cheaper.
    let fills = fields.iter().map(|f| {
        let (field, ty) = (f.ident, f.ty);
        quote_spanned! {at_span(ty)=>
            <#ty as ::kiln_nostd::Decode<#de>>::decode_into(__kiln_r, &mut __kiln_out.#field)?;
        }
    });
    quote! {
        #[automatically_derived]
        impl #impl_generics ::kiln_nostd::Decode<#de> for #ident #ty_generics #where_clause {
            fn decode(
                __kiln_r: &mut ::kiln_nostd::Reader<#de>,
            ) -> ::kiln_nostd::Result<Self> {
                #in_place
                ::kiln_nostd::__private::decode_derived(
                    __kiln_r,
                    |__kiln_r| ::core::result::Result::Ok(Self { #(#reads)* }),
                    |__kiln_r| ::core::result::Result::Ok(Self { #(#reads)* }),
                )
            }

            fn decode_into(
                __kiln_r: &mut ::kiln_nostd::Reader<#de>,
                __kiln_place: &mut Self,
            ) -> ::kiln_nostd::Result<()> {
                if const { ::kiln_nostd::__private::decodes_in_place::<Self>() } {
                    return ::kiln_nostd::__private::decode_derived_into(
                        __kiln_r,
                        __kiln_place,
                        |__kiln_r, __kiln_out| {
                            #(#fills)*
                            ::core::result::Result::Ok(())
                        },
                    );
                }
                *__kiln_place = <Self as ::kiln_nostd::Decode<#de>>::decode(__kiln_r)?;
                ::core::result::Result::Ok(())
            }
        }
    }
}

/// The in-place path of a derived decode: when the struct is not all
/// fixed-width fields (those take the one-check path of `decode_derived`)
/// and every field type has a `Decode::placeholder`, the struct is built
/// from the placeholders and each field decoded where it lies
/// (`Decode::decode_into`), so a large field (a `heapless::Vec`) is not
/// moved through temporaries. The condition is known at compile time, so
/// one of the two paths is left.
fn in_place_decode(fields: &[Field], de: &Lifetime) -> TokenStream {
    if fields.is_empty() {
        return TokenStream::new();
    }
    let slots: Vec<Ident> = (0..fields.len())
        .map(|i| format_ident!("__kiln_p{}", i))
        .collect();
    let placeholders = fields.iter().map(|f| {
        let ty = f.ty;
        quote_spanned! {at_span(ty)=>
            <#ty as ::kiln_nostd::Decode<#de>>::placeholder()
        }
    });
    let builds = fields.iter().zip(&slots).map(|(f, slot)| {
        let field = f.ident;
        quote!(#field: #slot,)
    });
    let fills = fields.iter().map(|f| {
        let (field, ty) = (f.ident, f.ty);
        quote_spanned! {at_span(ty)=>
            <#ty as ::kiln_nostd::Decode<#de>>::decode_into(__kiln_r, &mut __kiln_out.#field)?;
        }
    });
    quote! {
        if const { ::kiln_nostd::__private::decodes_in_place::<Self>() } {
            if let (#(::core::option::Option::Some(#slots),)*) = (#(#placeholders,)*) {
                // Built inside the result it is returned in: no move of
                // the whole struct either.
                let mut __kiln_result: ::kiln_nostd::Result<Self> =
                    ::core::result::Result::Ok(Self { #(#builds)* });
                if let ::core::result::Result::Ok(__kiln_value) = &mut __kiln_result {
                    let __kiln_read = ::kiln_nostd::__private::decode_derived_into(
                        __kiln_r,
                        __kiln_value,
                        |__kiln_r, __kiln_out| {
                            #(#fills)*
                            ::core::result::Result::Ok(())
                        },
                    );
                    if let ::core::result::Result::Err(__kiln_e) = __kiln_read {
                        __kiln_result = ::core::result::Result::Err(__kiln_e);
                    }
                }
                return __kiln_result;
            }
        }
    }
}

/// `'de`, or `'de1`, `'de2`, ... when the struct already has a lifetime of
/// that name.
fn fresh_lifetime(generics: &Generics) -> Lifetime {
    let taken = |name: &Ident| generics.lifetimes().any(|p| p.lifetime.ident == *name);
    let mut name = format_ident!("de");
    let mut n = 0u32;
    while taken(&name) {
        n = n.saturating_add(1);
        name = format_ident!("de{}", n);
    }
    Lifetime {
        apostrophe: Span::call_site(),
        ident: name,
    }
}

/// Errors gathered so that every bad field is reported in one build.
#[derive(Default)]
struct Errors(Option<Error>);

impl Errors {
    fn push(&mut self, error: Error) {
        match &mut self.0 {
            Some(all) => all.combine(error),
            None => self.0 = Some(error),
        }
    }

    fn finish(self) -> syn::Result<()> {
        self.0.map_or(Ok(()), Err)
    }
}
