"""Book code of the chapter "Collective communication", one module per page or
topic: tables, figures and worked numbers the pages ``chapters/{zh,en}/ch1/`` glue in.

Modules are imported by the pages directly (``from commbook.book.ch1.models import ...``);
this package imports none of them, so that each stays independent.
"""
