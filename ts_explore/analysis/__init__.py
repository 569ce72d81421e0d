"""Pure analyses over the model (no TS objects, no drawing)."""
