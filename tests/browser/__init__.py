"""The built site in a real browser (see conftest.py); a package, so that its conftest
module does not shadow tests/conftest.py."""
