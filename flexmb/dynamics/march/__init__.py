"""Marching from one time element to the next: the predictor of an element's unknowns and the end
values of a solved element (:mod:`.marching`), the rotation predictor (:mod:`.rotation_predictor`)."""
