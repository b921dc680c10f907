print("tokenbroker-core")
