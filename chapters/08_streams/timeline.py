#!/usr/bin/python3
"""Draws chapter 08's pipeline timeline: the command line of figures.py (this chapter's hook), kept under the
name the program's --help and the lesson give."""
from figures import main

if __name__ == "__main__":
    main()
