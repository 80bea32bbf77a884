//! Transforms (`transform`, `transform_each`) and tool-argument coercion.
