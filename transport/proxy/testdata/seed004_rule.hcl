host "shop.example.com" {
  location "/" {
    upstream "shop:3000" {}

    rule "checkout" {
      and {
        path {
          prefix = "/checkout"
        }
      }
      then {
        waiting_room {
          name           = "checkout"
          active         = 200
          on_store_error = "admit"
        }
      }
    }
  }
}
