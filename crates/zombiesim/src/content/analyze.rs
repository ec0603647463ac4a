//! Value analyses (001 §II).
