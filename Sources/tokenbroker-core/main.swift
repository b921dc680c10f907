import BrokerCLI
import Glibc

exit(await BrokerCommand.main(arguments: CommandLine.arguments))
