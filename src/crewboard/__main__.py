from crewboard.cli.main import main

main()
