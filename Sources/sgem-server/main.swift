print("sgem-server")
