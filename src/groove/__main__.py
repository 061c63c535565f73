from groove.cli import main

main()
