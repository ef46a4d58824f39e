from neoweave.cli import main

main()
