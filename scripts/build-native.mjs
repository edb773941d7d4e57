console.log("native build: pending")
