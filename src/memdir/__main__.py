from .faces.cli import main

main()
