import App

await SwitchboardCommand.main(CommandLine.arguments)
