"""Mechanical systems of mbsbook: parameter records with pure functions of the state."""
