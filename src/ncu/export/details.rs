//! The `--page details` reader (ncu rule results per region).
