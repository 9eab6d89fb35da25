from tlview.cli import entry

entry()
