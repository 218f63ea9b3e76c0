"""The implementation of Interlock's public API; import it from `interlock`, never from here."""
