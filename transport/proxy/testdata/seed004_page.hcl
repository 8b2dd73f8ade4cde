host "shop.example.com" {
  location "/" {
    upstream "shop:3000" {}

    waiting_room {
      active         = 500
      on_store_error = "admit"
      page           = "/etc/proksi/waiting.html"
    }
  }

  # The waiting page's files, outside the room
  location "/waiting/" {
    static_files {
      directory = "/srv/waiting"
    }
  }
}
