print("tokenbroker")
