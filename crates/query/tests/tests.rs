//! The integration tests of `query`: one binary made of modules.

mod dbref_paths;
mod differential;
mod expr_array_cases;
mod expr_cases;
mod expr_convert_cases;
mod expr_date_cases;
mod expr_date_math_cases;
mod expr_date_properties;
mod expr_math_cases;
mod expr_regex_cases;
mod expr_set_cases;
mod expr_sort_n_cases;
mod expr_text_cases;
mod expr_text_properties;
mod feature_walk;
mod filter_cases;
mod group_accumulators;
mod group_feed;
mod pipeline;
mod pipeline_differential;
mod pipeline_more_stages;
mod projection_bytes;
mod projection_cases;
mod sort_cases;
mod support;
mod type_matrix;
