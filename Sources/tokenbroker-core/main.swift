import BrokerCLI
import Glibc

// Before the first await: from then on the concurrency runtime's threads run and allocate.
BrokerCommand.prepareProcess(arguments: CommandLine.arguments)
exit(await BrokerCommand.main(arguments: CommandLine.arguments))
