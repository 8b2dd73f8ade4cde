host "shop.example.com" {
  location "/" {
    upstream "shop:3000" {}

    waiting_room {
      active         = 500
      on_store_error = "admit"
    }
  }
}
